"""Knowledge retrieval: guide and catalog documents → heading-aware chunks → Chroma (dense) + BM25, fused by RRF.

Nothing heavy happens at import: chromadb, sentence-transformers, bm25s and jieba are imported inside functions.
"""
