"""Search: embeddings, BM25-style sparse vectors, the vector index and hybrid retrieval."""
