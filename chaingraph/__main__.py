"""``python -m chaingraph`` runs the command line."""

from chaingraph.cli import cli

if __name__ == "__main__":
    cli()
