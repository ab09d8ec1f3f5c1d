"""The Slack bot: an adapter over the same assistant the API and the CLI use.

    app.py       build_slack_app(settings, assistant) and mount_slack(fastapi_app, settings, assistant)
    handlers.py  what an event, a slash command or a button does (ask, post, update, upload)
    blocks.py    pure Block Kit builders; mrkdwn.py converts the answer's Markdown
    threads.py   (channel, thread_ts) -> assistant session; dedup.py drops Slack's retries
    socket.py    Socket Mode runner; cli.py adds `gpu-advisor slack`

Importing this package imports neither slack_bolt nor the assistant.
"""
