"""What comes back after a compaction: editor files and project instructions, credentials never
restored.
"""
