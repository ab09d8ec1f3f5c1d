"""The cause model (issue 37): what the user's own numbers point to when a run did something they did not expect.

For each kind of observation (training OOM, memory higher than expected, slow training, more GPUs no faster, host
RAM killed, a server that OOMs or will not start, memory a server holds, slow decode or TTFT) a set of candidate
causes, each a pure function of the typed case (the model, method, knobs, hardware, engine and flags, load and what
the user saw) returning a typed `Cause`: whether it applies, how much of the observed gap it explains (a number with
its unit), and the fix that removes it with the fixed figure where the engine computes one. `rank.py` runs the
candidates of an observation, ranks them by the gap each explains against the user's own figures, and says what
one figure would settle it or that a figure is impossible for the setup. Every number is the sizing engine's
(service/sizing); the words are the phrase tables' (prompts/questions/diagnose.yaml).

    types.py          Quantity, Fix, Cause, Diagnosis
    cases.py          TrainCase / ServeRun: the setup as the engine sizes it, and what the user saw
    train_memory.py   training OOM and memory: replicas, model states, logits, activations, vision, RL ...
    train_speed.py    slow training and scaling: offload, ZeRO-3 over a slow link, MoE loops, PCIe, padding ...
    host.py           host RAM: N ranks each loading a copy, offload's host states, rollout workers
    serve_memory.py   a server's memory: the reservation, the start-up profile, other processes, TP layout ...
    serve_speed.py    decode bound by bandwidth, TTFT = prefill + queue, PCIe all-reduce, MLA, CPU offload ...
    rank.py           the candidates per observation, ranked; the figure that settles it; impossible figures
"""
