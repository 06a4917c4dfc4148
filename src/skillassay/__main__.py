from skillassay.cli import app

app()
