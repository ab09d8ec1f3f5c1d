"""The engine functions of the question types beyond `plan`: each takes the catalog and a workload (plus the
question's subject) and returns a plain dict artifact whose every figure comes from the sizing engine or the
planner. The assistant's tools, the MCP server and the evals' ground truth all call these."""
