"""`gpu-advisor` command line. Commands that only need the engine import no torch, chromadb or langchain."""

from __future__ import annotations


def main() -> None:
    from service.cli.app import build_app

    build_app()()
