"""Live scoring: a share of an agent's replies scored in the background as they happen
(`scorer`), which replies are picked (`sampling`), and what the store keeps of each reply
(`content`)."""
