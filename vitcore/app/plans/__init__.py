"""The Plans page's pieces (vitcore.app.plans.plans_view)."""
