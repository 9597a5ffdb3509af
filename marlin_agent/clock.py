"""Times as people read them: 2:11.0, 1:02:03.5."""


def clock(seconds: float) -> str:
    # Round to the tenth shown first, then split: splitting first lets 59.96 s print as 0:60.0.
    tenths = round(seconds * 10)
    minutes, tenth_secs = divmod(tenths, 600)
    hours, minutes = divmod(minutes, 60)
    secs = f"{tenth_secs // 10:02d}.{tenth_secs % 10}"
    return f"{hours}:{minutes:02d}:{secs}" if hours else f"{minutes}:{secs}"
