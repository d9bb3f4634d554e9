"""Rules in code: the verdicts a lookup computes, the grounding check of answers, the refund
rules as policy, the shop's own instructions."""
