"""The summarizers (extractive, model, memory, the API's compaction) and the summary message a
compaction commits.
"""
