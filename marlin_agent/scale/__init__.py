"""Scale-out: one job over many processes or hosts (shards, Ray), and the finalize step that
compacts the library once they are all done. Built on indexing and extraction, never used by them."""
