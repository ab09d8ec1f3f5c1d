"""`python -m service.cli`: the same as the `gpu-advisor` console script."""

from service.cli import main

main()
