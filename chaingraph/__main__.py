from chaingraph.cli import cli

cli()
