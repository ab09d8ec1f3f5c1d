"""One router per resource; `build_api` includes them."""
