"""SQLModel tables, one module per aggregate. Importing this package registers them all."""

from bayes_app.models.base import new_id, utcnow
from bayes_app.models.users import ApiToken, User, UserSession

__all__ = ["ApiToken", "User", "UserSession", "new_id", "utcnow"]
