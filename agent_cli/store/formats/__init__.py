"""File formats the store reads and writes: order files (JSON, CSV) and τ²-bench's retail
`db.json`."""
