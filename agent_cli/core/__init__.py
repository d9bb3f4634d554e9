"""The loop and what crosses it: decisions, events, seams, limits and budgets, the loop,
interrupts. Knows no Typer, Rich, httpx, store or provider."""
