"""`python -m bayes_app.search.index_server`: run the index process."""

import sys

from bayes_app.search.index_server.app import main

sys.exit(main())
