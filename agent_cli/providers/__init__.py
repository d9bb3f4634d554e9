"""Reasoning models: the offline playbook, scripted replay, and (later) real LLM adapters.

Every wire format lives in this package; the loop only knows the `ReasoningModel` protocol.
"""
