"""Standing questions: footage that keeps coming (a folder a camera writes into, a live stream) is
indexed as it arrives and asked the watch's questions; each new occurrence is one alert.

``runner`` runs a watch; ``folder`` and ``stream`` notice new footage; ``occurrences`` decides what is
new; ``notify`` delivers; ``state`` keeps it all in the library, so a restarted watch resumes;
``records`` holds the shapes.
"""
