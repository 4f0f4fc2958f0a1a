"""The provider API in Unity Catalog's shape (``/api/2.1/unity-catalog/shares``, recipients,
permissions, rotate-token), beside deltaport's own admin API, over the same catalog services.
``listeners`` mounts it. (Its modules land with issue 33.)"""
