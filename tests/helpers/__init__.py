"""What several test modules share: scripted judges, the data and catalogs they judge, and the
real servers and browsers the end-to-end tests start. A test module takes its helpers from
here, never from another test module (tests/test_architecture.py checks it)."""
