"""The collections application: what an RPC or a job asks for, in domain terms.

One module per aggregate owns the pool, the transactions and the order of the steps: it applies
the domain's rules, calls the stores, and raises cograph_errors errors. The servicer (rpc.py)
maps protobuf to these calls; the worker runs the job handlers.
"""
