"""The web chat for a shop's site: the page (`chat.html`), its loader (`chat.js`) and their
routes (`page.py`)."""
