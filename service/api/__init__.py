"""The chat API: its app (`build_api`; the whole server is service/app.py `create_app`), dependencies, schemas and one router per resource.

Nothing is built at import: `create_app()` makes the app; the catalog, the retrieval index and the assistant load
in a warm-up thread started by the lifespan, or on first use.
"""
