from skillassay.cli.main import app

app()
