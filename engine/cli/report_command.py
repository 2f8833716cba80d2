"""`scorers report`: one self-contained HTML page of a stored run (or two, compared)."""
