"""The footage library: what was seen and said in every indexed video, and how to find it.

``indexer`` turns sources into indexed chunks (Marlin captions, transcripts, embeddings);
``store`` is the LanceDB index behind it; ``embeddings`` and ``transcripts`` are the two
local models the library runs.
"""
