"""Getting to a working server and keeping it so: `setup`'s flow, `doctor`'s checks, the one
real test request both make, and the user's config file they write.
"""
