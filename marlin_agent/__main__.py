from marlin_agent.cli import app

app()
