"""`agent eval`: answer quality measured on a case set, per model."""
