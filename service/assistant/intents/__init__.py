"""The question types over the engine: feasibility and min_gpus (fit.py), compare and savings (compare.py), their
LangChain tools (tools.py) and their answers (render.py). `plan` and `knowledge` are the tools in
service/assistant/tools.py."""
