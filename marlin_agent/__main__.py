"""`python -m marlin_agent`: the same command as `marlin-agent`."""

from marlin_agent.resident.launch import main

if __name__ == "__main__":
    main()
