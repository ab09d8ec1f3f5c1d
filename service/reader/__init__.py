"""The reader: a chat message (Chinese or English) -> the question type (intent), its subject and the workload
slots, deterministically (regexes and small word lists). `parse_message` is the entry point; `merge_slots`
applies a follow-up to the previous workload."""

from service.reader.message import MAX_CHARS, ParsedMessage, merge_slots, parse_message

__all__ = ["MAX_CHARS", "ParsedMessage", "merge_slots", "parse_message"]
