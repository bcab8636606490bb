"""The dashboard at ``/ui``: server-rendered pages over the ops, for operators and agent
developers. Every page and action goes through ``ops.registry`` as the signed-in token, so it
shows and does exactly what that token may over HTTP."""
