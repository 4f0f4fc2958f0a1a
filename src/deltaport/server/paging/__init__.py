"""Paging: signed page and refresh tokens, listing pages, snapshot and change pages bound to a
recipient and a query. Uses ``protocol`` only."""
