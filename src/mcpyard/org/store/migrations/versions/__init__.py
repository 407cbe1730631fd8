"""The revisions, oldest first; each file names its `revision` and `down_revision`."""
