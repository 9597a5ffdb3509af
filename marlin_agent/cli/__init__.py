"""The command line: ``main`` builds the `marlin-agent` app from the command modules beside it.

``options`` declares the flags several commands share and turns them into settings;
``output`` owns stdout and stderr (the JSON document, errors, progress bars). The command
modules parse, call one library function and render: nothing else.
"""
