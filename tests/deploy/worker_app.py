"""One worker's app for the multi-worker tests (`uvicorn --factory tests.deploy.worker_app:app`): settings from the
environment (DATABASE_URL, CHROMA_HOST, GPU_ADVISOR_DATA_DIR...), the real assistant, and, when
GPU_ADVISOR_TEST_SLACK_URL is set, the Slack bot pointed at the test's loopback Slack API stub.

The retriever is the real one on the Chroma server when GPU_ADVISOR_TEST_REAL_INDEX=1, else the API tests'
stand-in (the session store is what these tests are about; the index build takes minutes on a small machine)."""

from __future__ import annotations

import os

from fastapi import FastAPI

from service.app import create_app
from service.settings import Settings

SIGNING_SECRET = "multi-worker-secret"
BOT_TOKEN = "xoxb-multi-worker"


def app() -> FastAPI:
    settings = Settings()
    retriever = None
    if os.environ.get("GPU_ADVISOR_TEST_REAL_INDEX") != "1":
        from tests.api.fakes import FakeRetriever

        retriever = FakeRetriever()
    application = create_app(settings, retriever=retriever)
    stub = os.environ.get("GPU_ADVISOR_TEST_SLACK_URL")
    if stub:
        from slack_sdk import WebClient

        from service.slack.app import mount_slack

        slack = settings.model_copy(update={"slack_signing_secret": SIGNING_SECRET, "slack_bot_token": BOT_TOKEN})
        mount_slack(application, slack, application.state.resources.assistant.get,
                    client=WebClient(token=BOT_TOKEN, base_url=stub))
    return application
