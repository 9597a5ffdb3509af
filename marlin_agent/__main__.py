"""`python -m marlin_agent`: the same command as `marlin-agent`."""

from marlin_agent.cli.main import app

if __name__ == "__main__":
    app()
