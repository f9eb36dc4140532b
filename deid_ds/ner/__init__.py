"""The neural tagger: embeddings trained on the notes, the Flair BiLSTM-CRF, prediction and hybrid mode.

Every module here imports torch, flair or gensim only inside its functions, so that importing
``deid_ds`` (and this package) stays cheap; the CLI imports a command's module only when it runs.
"""
