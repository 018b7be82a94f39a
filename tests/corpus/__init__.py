"""Real-world NumPy model code, written as its authors write it (issue 15); see tests/test_corpus.py."""
