"""Indexing: from sources to a library that answers. Source resolution, the chunk plan and its
captions, the transcript, and the writes, with one writer per database at a time."""
