from forestlab.cli import app

app(prog_name="forestlab")
