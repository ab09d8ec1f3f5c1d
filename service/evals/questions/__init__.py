"""The real-question eval (evals/questions/): questions in the users' words with their labels, a working split and
a frozen test split chosen by source thread. `dataset` loads them, `score` compares an answer (or a reading) with
the labels, `run` asks every question and reports both splits side by side."""
