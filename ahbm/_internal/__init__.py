"""Private helpers shared by every package: argument checks, safe files, text files.

Nothing here is public API; the names may change in any release.
"""
