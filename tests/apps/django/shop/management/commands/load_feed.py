"""`manage.py load_feed`: the storefront's product feed — every product with its category and
its reviews' count and mean rating — as JSON on stdout, what the shop's front page loads."""
import json

from django.core.management.base import BaseCommand
from django.db.models import Avg, Count

from shop.models import Product


class Command(BaseCommand):
    help = "Print the product feed as JSON on stdout."

    def handle(self, *args, **options):
        products = (
            Product.objects.select_related("category")
            .annotate(reviews_count=Count("reviews"), rating=Avg("reviews__rating"))
            .order_by("category__slug", "sku")
        )
        feed = [
            {
                "sku": p.sku,
                "name": p.name,
                "category": p.category.slug,
                "price": str(p.price),
                "reviews": p.reviews_count,
                "rating": None if p.rating is None else round(p.rating, 2),
            }
            for p in products
        ]
        self.stdout.write(json.dumps({"products": feed}, indent=2))
