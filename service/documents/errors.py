"""Errors the document builders raise; each names what is wrong and how to fix it."""

from __future__ import annotations

from service.errors import AdvisorError, InvalidInputError


class TemplateError(AdvisorError):
    """A document template is missing, malformed, or out of step with the code that fills it."""

    code = "template_error"


class DocumentInputError(InvalidInputError):
    """The plan given to a document builder cannot produce that document (no candidate, unsupported model)."""
