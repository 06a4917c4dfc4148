from skillassay.cli.main import script

script()
