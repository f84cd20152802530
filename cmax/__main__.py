"""``python -m cmax``: for users who also have SemiAnalysis' ClusterMAX ``cmax`` installed."""

from cmax.cli import run

if __name__ == "__main__":
    run()
