"""Importing the Slack modules builds nothing: no settings, no Bolt app, no assistant, no database."""

from __future__ import annotations

import subprocess
import sys


def test_importing_the_slack_package_has_no_side_effects(tmp_path: object) -> None:
    code = ("import sys, service.settings as s; "
            "import service.slack, service.slack.app, service.slack.handlers, service.slack.blocks, "
            "service.slack.dedup, service.slack.threads, service.slack.socket, service.cli.slack_cmd; "
            "assert s.get_settings.cache_info().currsize == 0, 'settings built'; "
            "heavy = {'slack_bolt', 'torch', 'chromadb', 'langchain', 'langgraph'} & set(sys.modules); "
            "assert not heavy, heavy; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
    assert list(tmp_path.iterdir()) == []  # type: ignore[attr-defined]
